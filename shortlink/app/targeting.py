"""Link rules for every door (issue 36): read and replace a link's rules document.

Replacing runs the validation and the write on the writer, then tells the link cache of
every process that the link changed, as a link update does: the cache entry carries the
compiled rules."""

from __future__ import annotations

from collections.abc import Callable

from shortlink.app.hosts import Hosts
from shortlink.storage import Database
from shortlink.targeting import service
from shortlink.targeting.schema import RulesDocument


class Targeting:
    def __init__(self, db: Database, hosts: Hosts, *, changed: Callable[[str], None], blocked: frozenset[str]):
        self.db, self.hosts, self.blocked = db, hosts, blocked
        self._changed = changed

    async def rules(self, account_id: int, link_id: str) -> RulesDocument:
        return await self.db.read(service.link_rules, account_id, link_id)

    async def set_rules(self, account_id: int, link_id: str, document: RulesDocument) -> RulesDocument:
        stored, code = await self.db.write(
            service.set_link_rules, account_id, link_id, document, is_ours=self.hosts.is_ours, blocked=self.blocked
        )
        self._changed(code)
        return stored
