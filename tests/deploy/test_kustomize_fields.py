"""deploy/kubernetes renders without a warning: no field kustomize deprecates (`bases`, `patchesStrategicMerge`...)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from tests.deploy.test_kubernetes_manifests import KUBERNETES, OVERLAYS, rendered

# Fields kustomize v5 warns about and will stop reading (`kustomize edit fix` rewrites them).
DEPRECATED = {"bases", "patchesStrategicMerge", "patchesJson6902", "vars", "commonLabels", "imageTags"}


def test_no_kustomization_uses_a_deprecated_field() -> None:
    files = sorted(KUBERNETES.rglob("kustomization.yaml"))
    assert len(files) == 1 + len(OVERLAYS)
    for path in files:
        used = DEPRECATED & set(yaml.safe_load(path.read_text()))
        assert not used, f"{path.relative_to(KUBERNETES)}: {sorted(used)}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kubectl_kustomize_renders_without_warnings(overlay: str) -> None:
    assert rendered(overlay)  # skips (or fails in CI) without kubectl
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    result = subprocess.run(
        [kubectl, "kustomize", str(KUBERNETES / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "Warning" not in result.stderr and "deprecated" not in result.stderr, result.stderr
