"""Python client for the IBEX memory write API.

    from ibex_client import IbexClient

    with IbexClient("http://127.0.0.1:8000", api_key, org_id="acme", agent_id="support-bot") as ibex:
        result = ibex.add("User prefers Python for data work", source="chat", wait=5)
        print(result.status, result.memory_id, result.near_duplicates)

``AsyncIbexClient`` has the same calls, awaited.
"""

from ibex_client._client import AsyncIbexClient, IbexClient
from ibex_client._core import (BATCH_MAX, AuthenticationError, BatchItemResult, ConflictError, IbexError, Job,
                               NearDuplicate, NotFoundError, PayloadTooLargeError, PermissionDeniedError,
                               RateLimitedError, RetryPolicy, UnavailableError, ValidationError, WriteResult,
                               derived_key)

__version__ = "0.1.0"
__all__ = ["BATCH_MAX", "AsyncIbexClient", "AuthenticationError", "BatchItemResult", "ConflictError", "IbexClient",
           "IbexError", "Job", "NearDuplicate", "NotFoundError", "PayloadTooLargeError", "PermissionDeniedError",
           "RateLimitedError", "RetryPolicy", "UnavailableError", "ValidationError", "WriteResult", "derived_key"]
