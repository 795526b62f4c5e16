"""The documents the catalogue was drawn from, cited by title.

The five source posts (in Chinese) are ``S0``-``S4``; a case cites one with its passage:
``sources=(S2.at("section 'F.interpolate'"),)``. The upgrade cases cite torch's own release
notes: ``release_notes("2.6.0").at("Backwards Incompatible Changes: torch.load")``.
"""

from torch_pitfalls.case import Source

S0 = Source(
    title="分享一下我最近所经历的踩坑经历吧 (sharing my recent pitfalls: a segmentation loss in torch 0.3, 2017)",
)
S1 = Source(
    title="Understanding&Debugging PyTorch (tianchen, 2020)",
)
S2 = Source(
    title="那些用pytorch踩过的坑 (pitfalls met with PyTorch; 土豆, Zhihu, 2020)",
    url="https://zhuanlan.zhihu.com/p/180020358",
)
S3 = Source(
    title="[PocketFlow]更改网络结构之后,输出维度正确,AP还是低? (a TensorFlow detector whose AP collapsed after a change of architecture, 2019)",
)
S4 = Source(
    title="PyTorch的gradcheck()报错问题RuntimeError: Jacobian mismatch for output 0 with respect to input 1的解决 (fixing gradcheck's Jacobian mismatch)",
)


def release_notes(version: str) -> Source:
    """The GitHub release page of one torch release (its notes: Backwards Incompatible Changes,
    Deprecations, ...)."""
    return Source(
        title=f"PyTorch {version} release notes", url=f"https://github.com/pytorch/pytorch/releases/tag/v{version}"
    )
