"""The TypedDicts and Literals of every request, query and answer of the API, generated from
docs/openapi.json into _types.py: `from billstream.types import CreateCustomerBody, Invoice`."""
from ._types import *  # noqa: F401,F403
from ._types import __all__  # noqa: F401
