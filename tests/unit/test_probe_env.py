import os
def test_env():
    print("CI=", os.environ.get("CI"), "GPUOPS=", os.environ.get("GPUOPS_REAL_FIXTURES"), "CWD=", os.getcwd())
    assert False, repr({k: v for k, v in os.environ.items() if k in ("CI", "GPUOPS_REAL_FIXTURES", "GPUOPS_REQUIRE_REAL_FIXTURES")})
