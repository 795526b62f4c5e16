"""PTF127 (torchscript-deprecated): torch.jit.script, deprecated since torch 2.10."""
PITFALL = {
    "script_module": "import torch\n\ndef export(model):\n    return torch.jit.script(model.eval())\n",
    "decorator": "import torch\n\n@torch.jit.script\ndef fused_gelu(x):\n    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))\n",
    "from_jit_import": "from torch.jit import script\n\n@script\ndef add(a, b):\n    return a + b\n",
    "aliased_jit": "import torch.jit as jit\n\nscripted = jit.script(model)\n",
    "in_test_loop": "import torch\n\ndef check(models):\n    for m in models:\n        s = torch.jit.script(m)\n        assert s is not None\n",
}
NEAR_MISS = {
    "compile": "import torch\n\nfast = torch.compile(model)\n",
    "silenced_on_purpose": "import torch\nimport warnings\n\ndef scripted(fn):\n    with warnings.catch_warnings():\n        warnings.simplefilter('ignore', FutureWarning)  # torch 2.14 warns; only a trace pays for it\n        return torch.jit.script(fn)\n",
    "is_scripting_check": "import torch\n\ndef f(x):\n    if torch.jit.is_scripting():\n        return x\n    return x + 1\n",
    "export": "import torch\n\nep = torch.export.export(model, (x,))\n",
}
SEEN = {
    "script_module": "lightning/pytorch/core/module.py (torch.jit.script(self.eval(), **kwargs), in build/realcode/src)",
    "decorator": "diffusers/pipelines/kolors/text_encoder.py (@torch.jit.script def apply_rotary_pos_emb, in build/realcode/untuned)",
    "from_jit_import": "not found by search",
    "aliased_jit": "not found by search",
    "in_test_loop": "einops/tests/test_layers.py (torch.jit.script(model1), in build/realcode/untuned)",
}

# round 2: torch.jit.trace warns with the same deprecation from 2.10 (cases/upgrade/torchscript_deprecated.py)
PITFALL["trace_export"] = "import torch\n\ndef export(model, example, path):\n    traced = torch.jit.trace(model.eval(), example)\n    traced.save(path)\n"
SEEN["trace_export"] = "transformers/models/qwen3_vl/modeling_qwen3_vl.py (a comment on torch.jit.trace() of the model, in build/realcode/src)"
