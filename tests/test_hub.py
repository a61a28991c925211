"""numtorch.hub with source='local' and file:// URLs (no network), and model_zoo.load_url."""

import pytest
import torch

import numtorch as nt
from numtorch.utils import model_zoo

HUBCONF = '''
dependencies = ["numpy"]
import numtorch


def tiny(n=3, bias=True):
    """A tiny linear model."""
    return numtorch.nn.Linear(n, 2, bias=bias)


def _helper():
    pass
'''


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    monkeypatch.setattr(nt.hub, "_hub_dir", str(tmp_path / "cache"))
    return tmp_path


def test_load_local_calls_the_entry_point(repo):
    m = nt.hub.load(str(repo), "tiny", 4, source="local", bias=False)
    assert isinstance(m, nt.nn.Linear) and m.weight.shape == (2, 4) and m.bias is None


def test_missing_dependency_and_entry(repo):
    (repo / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_x"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_x"):
        nt.hub.load(str(repo), "tiny", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        nt.hub.load(str(repo), "tiny", source="svn")


def test_github_repo_from_the_cache_only(repo):
    with pytest.raises(RuntimeError, match="does not download repositories from GitHub"):
        nt.hub.load("owner/name", "tiny")
    cached = repo / "cache" / "owner_name_main"
    cached.mkdir(parents=True)
    (cached / "hubconf.py").write_text(HUBCONF)
    assert nt.hub.list("owner/name") == ["tiny"]
    assert nt.hub.help("owner/name", "tiny") == "A tiny linear model."
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        nt.hub.load("owner/name", "nope")


def test_get_dir_honours_torch_home(monkeypatch, tmp_path):
    monkeypatch.setattr(nt.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert nt.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "hub")
    nt.hub.set_dir(str(tmp_path / "x"))
    assert nt.hub.get_dir() == str(tmp_path / "x")


def test_load_state_dict_from_url_caches_the_file(repo, capsys):
    weights = nt.nn.Linear(3, 2).state_dict()
    nt.save(weights, repo / "w-0a1b.pth")
    url = (repo / "w-0a1b.pth").as_uri()
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "0a1b"'):
        nt.hub.load_state_dict_from_url(url, check_hash=True)
    got = nt.hub.load_state_dict_from_url(url, file_name="w.pth")
    assert "Downloading" in capsys.readouterr().out
    assert (repo / "cache" / "checkpoints" / "w.pth").exists()
    (repo / "w-0a1b.pth").unlink()  # now only the cache has it
    again = model_zoo.load_url(url, file_name="w.pth")
    for k in weights:
        assert nt.equal(got[k], weights[k]) and nt.equal(again[k], weights[k])


def test_an_unreachable_url_is_an_error(repo):
    with pytest.raises(RuntimeError, match="could not download"):
        nt.hub.load_state_dict_from_url("http://127.0.0.1:9/x.pth")
    assert not (repo / "cache" / "checkpoints" / "x.pth").exists()
