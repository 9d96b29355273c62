"""Operations endpoints: health, readiness and metrics."""

from __future__ import annotations

import httpx2

from tests.conftest import Service

FREE = {"X-Free-Pool": "1"}


def test_health_readiness_and_metrics(service: Service, sdk_base: str) -> None:
    with service(free_pool_per_ip=1, rate_limit="3/minute") as base:
        assert httpx2.get(f"{base}/healthz").json() == {"status": "ok"}
        ready = httpx2.get(f"{base}/readyz").json()
        assert ready == {
            "status": "ready",
            "store": {"backend": "memory", "ok": True},
            "rate_limits": {"shared": False, "ok": True},
            "history": {"ok": True, "queued": 0},
            "signing": {"ok": True, "keyid": ready["signing"]["keyid"]},
            "payments": {"enabled": False, "facilitator_ok": False, "supported": None},
        }
        url = {"url": f"{sdk_base}/stateless-json/mcp"}
        assert httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30).status_code == 200
        assert httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30).status_code == 402
        assert httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30).status_code == 402
        assert httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30).status_code == 429
        response = httpx2.get(f"{base}/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert 'mcp_sonde_probes_total{status="ok"} 1.0' in text
    assert "mcp_sonde_probe_duration_seconds_count 1.0" in text
    assert 'mcp_sonde_free_pool_draws_total{outcome="drawn"} 1.0' in text
    assert 'mcp_sonde_free_pool_draws_total{outcome="exhausted"} 2.0' in text
    assert 'mcp_sonde_limits_hit_total{limit="client_rate"} 1.0' in text
    assert "mcp_sonde_single_flight_joins_total 0.0" in text
