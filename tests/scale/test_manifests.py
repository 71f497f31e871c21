"""deploy/kubernetes/ferromcp.yaml against the Kubernetes JSON schemas, offline.

`make test-manifests` runs it. kubernetes-validate (pinned in
tests/scale/scale.mk) carries the schemas of every Kubernetes release in its
wheel, so nothing is fetched; strict mode also refuses fields the schema does
not know (a misspelled `readinessProb` is an error, not ignored). Broken
copies of the manifest must be refused, so the check can fail. The
manifest's settings that docs/DEPLOYING.md relies on are checked too, and
that the docs quote tests/scale/nginx.conf.in exactly.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "deploy" / "kubernetes" / "ferromcp.yaml"
NGINX_CONF = ROOT / "tests" / "scale" / "nginx.conf.in"
DEPLOYING = ROOT / "docs" / "DEPLOYING.md"
# The Kubernetes release whose schemas are used (scale.mk passes its pin).
K8S_VERSION = os.environ.get("KUBERNETES_SCHEMA_VERSION", "1.37.0")

Doc = dict[str, Any]


def documents() -> list[Doc]:
    with MANIFEST.open() as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def validate(doc: Doc) -> None:
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def find(kind: str, name: str) -> Doc:
    for doc in documents():
        if doc["kind"] == kind and doc["metadata"]["name"] == name:
            return doc
    raise AssertionError(f"{MANIFEST.name} has no {kind} {name}")


def container(doc: Doc) -> Doc:
    containers: list[Doc] = doc["spec"]["template"]["spec"]["containers"]
    return containers[0]


@pytest.mark.parametrize("doc", documents(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_document_is_valid(doc: Doc) -> None:
    validate(doc)


def _replicas_as_text(d: Doc) -> None:
    d["spec"]["replicas"] = "three"


def _misspelled_probe(d: Doc) -> None:
    c = container(d)
    c["readinessProb"] = c.pop("readinessProbe")


def _port_as_text(d: Doc) -> None:
    container(d)["ports"][0]["containerPort"] = "eight thousand"


def _env_without_name(d: Doc) -> None:
    del container(d)["env"][0]["name"]


@pytest.mark.parametrize(
    "breakage", [_replicas_as_text, _misspelled_probe, _port_as_text, _env_without_name], ids=lambda f: f.__name__
)
def test_a_broken_manifest_is_refused(breakage: Callable[[Doc], None]) -> None:
    broken = copy.deepcopy(find("Deployment", "ferromcp"))
    breakage(broken)
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)


def test_the_replicas_are_wired_as_deploying_md_says() -> None:
    deployment = find("Deployment", "ferromcp")
    assert deployment["spec"]["replicas"] == 3
    pod = deployment["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] >= 15
    server = container(deployment)
    assert server["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert server["livenessProbe"]["httpGet"]["path"] == "/healthz"
    env = {e["name"]: e for e in server["env"]}
    secret_ref = env["FERROMCP_SEAL_KEYS"]["valueFrom"]["secretKeyRef"]
    secret = find("Secret", secret_ref["name"])
    assert secret_ref["key"] in secret["stringData"]
    assert env["FERROMCP_REPLICA"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    redis = find("Service", "ferromcp-redis")
    redis_url = f"redis://{redis['metadata']['name']}:{redis['spec']['ports'][0]['port']}"
    assert env["FERROMCP_EVENT_BUS"]["value"] == redis_url
    assert env["FERROMCP_TASK_STORE"]["value"] == redis_url
    service = find("Service", "ferromcp")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


def test_deploying_md_quotes_the_tested_nginx_config() -> None:
    quoted = re.findall(r"```nginx\n(.*?)```", DEPLOYING.read_text(), re.DOTALL)
    assert NGINX_CONF.read_text() in quoted, "docs/DEPLOYING.md must quote tests/scale/nginx.conf.in unchanged"
