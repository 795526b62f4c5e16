"""PTF134 (ao-quantization-deprecated): torch.ao.quantization's eager and FX entry points,
deprecated since torch 2.8."""
PITFALL = {
    "dynamic_full_path": "import torch\n\nq = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)\n",
    "legacy_namespace": "import torch\n\nqmodel = torch.quantization.quantize_dynamic(model, {torch.nn.LSTM, torch.nn.Linear}, dtype=torch.qint8)\n",
    "prepare_convert_qat": "import torch\n\ndef qat(model):\n    torch.ao.quantization.prepare_qat(model, inplace=True)\n    train(model)\n    torch.ao.quantization.convert(model, inplace=True)\n",
    "fx_from_import": "from torch.ao.quantization.quantize_fx import prepare_fx, convert_fx\n\nprepared = prepare_fx(model, qconfig_mapping, example_inputs)\nq = convert_fx(prepared)\n",
    "module_alias": "import torch.ao.quantization as tq\n\nmodel.qconfig = tq.get_default_qconfig('x86')\ntq.prepare(model, inplace=True)\n",
}
NEAR_MISS = {
    "torchao": "from torchao.quantization import quantize_, Int8WeightOnlyConfig\n\nquantize_(model, Int8WeightOnlyConfig())\n",
    "qconfig_only": "import torch\n\nqconfig = torch.ao.quantization.get_default_qconfig('fbgemm')\n",
    "other_library_prepare": "from accelerate import Accelerator\n\nmodel, opt = Accelerator().prepare(model, opt)\n",
}
SEEN = {
    "dynamic_full_path": "not found by search; the dynamic-quantization tutorial spelling",
    "legacy_namespace": "not found by search",
    "prepare_convert_qat": "torchvision/models/quantization/mobilenetv3.py (torch.ao.quantization.prepare_qat / convert, in build/realcode/src)",
    "fx_from_import": "torchao/testing/pt2e/utils.py (prepare_fx(...), in build/realcode/untuned)",
    "module_alias": "torchao/sparsity/wanda.py (torch.ao.quantization.prepare(model, inplace=True), in build/realcode/untuned)",
}
