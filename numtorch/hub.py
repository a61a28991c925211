"""torch.hub: models from a directory's ``hubconf.py`` and checkpoints from URLs, cached under
``get_dir()``.

numtorch fetches nothing from GitHub: ``source='github'`` works for a repository already in
the hub cache (``<hub dir>/<owner>_<name>_<ref>``), and raises otherwise. URLs are read
with urllib (``file://`` ones included).
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import uuid
import warnings
from typing import Any
from urllib.error import URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .serialization import load as _load

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_URL_TIMEOUT_S = 30  # a URL that does not answer is an error, not a hang

_hub_dir: str | None = None


def _get_torch_home() -> str:
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir() -> str:
    """The hub cache directory: set_dir's, else ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaults
    to ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use d as the hub cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


@contextlib.contextmanager
def _on_sys_path(path: str):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir: str):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entry(module, model):
    """The callable entry point ``model`` of a hubconf, after its dependencies are checked."""
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    deps = getattr(module, VAR_DEPENDENCY, None)
    if deps is not None:
        missing = [d for d in deps if importlib.util.find_spec(d) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def _cached_repo(github: str, force_reload: bool) -> str:
    """The directory of a GitHub repository in the hub cache (numtorch does not download)."""
    repo_info, _, ref = github.partition(":")
    owner, name = repo_info.split("/")
    refs = [ref] if ref else ["main", "master"]
    if not force_reload:
        for r in refs:
            path = os.path.join(get_dir(), "_".join((owner, name, r.replace("/", "_"))))
            if os.path.isfile(os.path.join(path, MODULE_HUBCONF)):
                return path
    raise RuntimeError(
        f"numtorch.hub does not download repositories from GitHub: {github} is not in the hub "
        f"cache ({get_dir()}). Clone it there as {owner}_{name}_<ref>, or load it with "
        "source='local' from its directory."
    )


def _hubconf_of(repo: str, source: str, force_reload: bool):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    return repo if source == "local" else _cached_repo(repo, force_reload)


def list(  # noqa: A001 - torch.hub.list
    github: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo: Any = "check",
    verbose: bool = True,
) -> builtins.list[str]:
    """The callable entry points (names not starting with ``_``) of a repository's hubconf."""
    repo_dir = _cached_repo(github, force_reload)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(  # noqa: A001 - torch.hub.help
    github: str,
    model: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo: Any = "check",
) -> str | None:
    """The docstring of a repository's entry point ``model``."""
    repo_dir = _cached_repo(github, force_reload)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _entry(module, model).__doc__


def load(
    repo_or_dir: str,
    model: str,
    *args: Any,
    source: str = "github",
    trust_repo: Any = "check",
    force_reload: bool = False,
    verbose: bool = True,
    skip_validation: bool = False,
    **kwargs: Any,
) -> Any:
    """The entry point ``model`` of a repository's (or directory's) hubconf.py, called with
    args and kwargs."""
    repo_dir = _hubconf_of(repo_or_dir, source, force_reload)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
        return _entry(module, model)(*args, **kwargs)


def download_url_to_file(
    url: str, dst: str, hash_prefix: str | None = None, progress: bool = True
) -> None:
    """Copy what url holds to the path dst (whole or not at all), checking that its SHA256
    starts with hash_prefix when given."""
    dst = os.path.expanduser(dst)
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with urlopen(
            Request(url, headers={"User-Agent": "torch.hub"}), timeout=_URL_TIMEOUT_S
        ) as u:
            with open(tmp, "wb") as f:
                while buffer := u.read(READ_DATA_CHUNK):
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
    except (URLError, OSError) as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise RuntimeError(f"could not download {url}: {getattr(e, 'reason', e)}") from e
    try:
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[: len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = False,
) -> dict[str, Any]:
    """The object saved at url, loaded with numtorch.load; the file is downloaded once into
    ``model_dir`` (default ``<hub dir>/checkpoints``) and read from there afterwards."""
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn(
            "TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2
        )
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        hash_prefix = None
        if check_hash:
            found = HASH_REGEX.search(filename)
            hash_prefix = found.group(1) if found else None
        download_url_to_file(url, cached, hash_prefix, progress=progress)
    return _load(cached, map_location=map_location, weights_only=weights_only)
