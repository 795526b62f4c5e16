"""Every detector, each beside the case that proves it (tests/watch/test_proofs.py)."""

from __future__ import annotations

from torch_pitfalls.watch.detectors.base import Detector


def all_detectors() -> list[type[Detector]]:
    # imported here: each module imports torch, and the watcher is switched on only when asked
    from torch_pitfalls.watch.detectors.conversion import Uint8ConversionWraparound
    from torch_pitfalls.watch.detectors.data_order import TrainingDataNotShuffled
    from torch_pitfalls.watch.detectors.eval_mode import EvalWithoutNoGrad
    from torch_pitfalls.watch.detectors.freezing import (
        ForgotTrainAfterEval,
        FrozenOutputLayer,
        ModelEvalFreezesNothing,
    )
    from torch_pitfalls.watch.detectors.graphs import ExplodingLoss, LossAppendKeepsGraph, NanGradThroughMask
    from torch_pitfalls.watch.detectors.heuristic import (
        CrossEntropyAfterSoftmax,
        FunctionalDropoutTrainingFlag,
        Interpolate3dInput,
        KLDivExpectsLogInput,
        L2NormalizeAllDims,
        MissingZeroGrad,
        SharedModuleReuse,
        TrainEvalMode,
        ViewInsteadOfPermute,
    )
    from torch_pitfalls.watch.detectors.inplace import InplaceEditThroughData
    from torch_pitfalls.watch.detectors.layout import BatchFirstMismatch
    from torch_pitfalls.watch.detectors.losses import LossTargetRequiresGrad, TargetShapeBroadcast
    from torch_pitfalls.watch.detectors.modules import UnregisteredTensorAttribute
    from torch_pitfalls.watch.detectors.numpy_memory import FromNumpySharesMemory
    from torch_pitfalls.watch.detectors.optim import ParamReassignmentDetachesOptimizer
    from torch_pitfalls.watch.detectors.softmax import SoftmaxSingletonAxis
    from torch_pitfalls.watch.detectors.training import (
        FrozenParamsKeepMoving,
        GraphCutInForward,
        InitAfterLoadStateDict,
        LossRewrappedFromItem,
        ParameterUnusedInForward,
        RequiresGradTypo,
        SubmodulesInPlainList,
    )

    return [
        SoftmaxSingletonAxis,
        TargetShapeBroadcast,
        LossTargetRequiresGrad,
        NanGradThroughMask,
        LossAppendKeepsGraph,
        Uint8ConversionWraparound,
        UnregisteredTensorAttribute,
        ParamReassignmentDetachesOptimizer,
        FromNumpySharesMemory,
        EvalWithoutNoGrad,
        RequiresGradTypo,
        FrozenParamsKeepMoving,
        LossRewrappedFromItem,
        ParameterUnusedInForward,
        GraphCutInForward,
        SubmodulesInPlainList,
        InitAfterLoadStateDict,
        InplaceEditThroughData,
        BatchFirstMismatch,
        TrainingDataNotShuffled,
        ExplodingLoss,
        ForgotTrainAfterEval,
        # heuristic (pedantic = True): only with watch(pedantic=True) / --pedantic
        L2NormalizeAllDims,
        Interpolate3dInput,
        ViewInsteadOfPermute,
        TrainEvalMode,
        SharedModuleReuse,
        CrossEntropyAfterSoftmax,
        KLDivExpectsLogInput,
        FunctionalDropoutTrainingFlag,
        MissingZeroGrad,
        FrozenOutputLayer,
        ModelEvalFreezesNothing,
    ]


def detectors_for(pedantic: bool = False, select: tuple[str, ...] = ()) -> list[Detector]:
    """Fresh instances of the detectors to run: the sound ones, the heuristic ones with
    ``pedantic``, only the cases named in ``select`` when it is given."""
    return [cls() for cls in all_detectors() if (pedantic or not cls.pedantic) and (not select or cls.case in select)]
