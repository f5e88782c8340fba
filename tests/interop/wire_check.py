"""Validates raw gitward results against the official SDK's per-version wire types.

Reads JSON lines `{"method", "version", "result"}` on stdin. Each result must validate
against the `mcp_types` surface for that method and protocol version, and must carry no
key that the version's surface drops (a later revision's field leaking into an older
era). Prints one line per check; exits non-zero on the first failure.
"""

import json
import sys

from mcp_types import methods


def keys_leaked(ours, shaped, path="result"):
    leaked = []
    if isinstance(ours, dict) and isinstance(shaped, dict):
        for key, value in ours.items():
            # Schemas and structured payloads are the tool's own open JSON.
            if key in ("inputSchema", "outputSchema", "structuredContent", "_meta"):
                continue
            if key not in shaped:
                leaked.append(f"{path}.{key}")
            else:
                leaked += keys_leaked(value, shaped[key], f"{path}.{key}")
    elif isinstance(ours, list) and isinstance(shaped, list):
        for i, (a, b) in enumerate(zip(ours, shaped)):
            leaked += keys_leaked(a, b, f"{path}[{i}]")
    return leaked


def main() -> None:
    count = 0
    for line in sys.stdin:
        item = json.loads(line)
        method, version, result = item["method"], item["version"], item["result"]
        shaped = methods.serialize_server_result(method, version, result)
        leaked = keys_leaked(result, shaped)
        if leaked:
            sys.exit(f"{method} @ {version}: not in this version's surface: {leaked}")
        count += 1
        print(f"ok {method} @ {version}")
    if count == 0:
        sys.exit("nothing to check")


if __name__ == "__main__":
    main()
