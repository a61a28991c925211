"""torch.nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as
parametrizations (registered with ``parametrize.register_parametrization``)."""

from __future__ import annotations

from enum import Enum, auto

from ..._core import dtype as dt
from ..._core.tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.binary import add_p
from ...ops.creation import eye, zeros_like
from ...ops.linalg import linalg_solve_p
from ...ops.linalg.householder import geqrf, householder_product
from ...ops.random import randn
from ...ops.shape import cat
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, _weight_norm_compat_hook, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    identity = eye(k, dtype=q.dtype, device=q.device)
    return bool((q.mH @ q).allclose(identity, atol=10.0 * n * dt.finfo(q.dtype).eps))


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of a = QR (a tall) with R's diagonal real and non-negative."""
    x, tau = geqrf(a)
    q = householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map == _OrthMaps.householder:
            a = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = householder_product(a, tau)
            q = q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        else:
            X = X.tril()
            if n != k:  # a square skew-symmetric matrix, padded with zero columns
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            a = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = a.matrix_exp()
            else:
                identity = eye(n, dtype=a.dtype, device=a.device)
                q = linalg_solve_p.fn(
                    add_p.fn(identity, a, alpha=-0.5), add_p.fn(identity, a, alpha=0.5)
                )
            if n != k:
                q = q[..., :k]
        if hasattr(self, "base"):
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        given = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != _OrthMaps.householder:
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential "
                    "or the Cayley parametrizations when use_trivialization=False."
                )
            a, tau = geqrf(Q)
            # the reflectors' signs go on the diagonal, which householder's forward reads
            a.diagonal(dim1=-2, dim2=-1).sign_()
            a.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return a.mT if transpose else a
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            fill = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, fill], dim=-1))
        self.base = Q
        neg_identity = zeros_like(given)
        neg_identity.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_identity


def _named_tensor(module: Module, name: str) -> Tensor:
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    return weight


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Parametrize module.<name> (a matrix or a batch of them) as orthogonal (unitary) with
    ``orthogonal_map`` "matrix_exp", "cayley" or "householder"; returns module."""
    weight = _named_tensor(module, name)
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Parametrize module.<name> as g * v / ||v|| (the norm over every dim but ``dim``; over
    all when None), with g in ``original0`` and v in ``original1``; returns module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat(module, state_dict, prefix, *_):
        _weight_norm_compat_hook(state_dict, prefix, name)

    module.register_load_state_dict_pre_hook(compat)
    return module


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from good estimates of the singular vectors rather than random ones
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if weight.ndim <= 1:
            raise AssertionError(
                f"Expected weight to have more than 1 dimension, got {weight.ndim}"
            )
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(weight_mat.H.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # copies: autograd must see the vectors as they are now, not as later updates leave them
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Parametrize module.<name> as W / sigma(W), sigma estimated by power iteration (one
    step per access in training mode); returns module."""
    weight = _named_tensor(module, name)
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
