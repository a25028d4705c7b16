"""Who may do what: tenants and how they share the workers, their members and the groups
(``accounts``), and API tokens (``api_tokens``). Importing this package registers them."""

from .accounts import MemberAdmin, SuperuserGroupAdmin, TenantAdmin
from .api_tokens import ApiTokenAdmin

__all__ = ["ApiTokenAdmin", "MemberAdmin", "SuperuserGroupAdmin", "TenantAdmin"]
