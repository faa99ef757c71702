"""Moving in and out from the dashboard: the import page (upload, the dry run's
report row by row, confirm), downloads of every link, bulk actions on the link list, and
the analytics figures as CSV beside each chart.

The import's confirmation carries the uploaded file back in the form (compressed): no file
is kept on the server between the two requests, so any process of a deployment can take
the second one.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import AsyncIterator
from typing import Any

from litestar import Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Stream

from shortlink.accounts.schema import SessionAccount
from shortlink.analytics.csvexport import SECTIONS
from shortlink.application.imports import MAX_UPLOAD_BYTES
from shortlink.dashboard import forms
from shortlink.dashboard.analytics import range_query
from shortlink.dashboard.guard import SignedInController, client_address
from shortlink.dashboard.links import BULK_ACTIONS
from shortlink.dashboard.render import page, see_other
from shortlink.errors import RateLimitedError, ValidationError
from shortlink.links.bulk import MAX_BULK_IDS, BulkLinkAction
from shortlink.links.tags import TagInput
from shortlink.wiring import Services

SOURCES = {
    "csv": "Generic CSV or JSON lines (this service's export)",
    "bitly": "Bitly (links CSV or API JSON)",
    "shlink": "Shlink (REST API JSON with visits, or the web client's CSV)",
    "kutt": "Kutt (API JSON)",
    "yourls": "YOURLS (SQL dump, or a yourls_url CSV)",
    "fdl": "Firebase Dynamic Links (CSV or JSON)",
}
POLICY_LABELS = {
    "skip": "Skip the row",
    "suffix": "Add a suffix (-2, -3…)",
    "fail": "Import nothing",
}
# The upload and its confirmation (the file again, compressed and in base64) in one request.
IMPORT_BODY_BYTES = 2 * MAX_UPLOAD_BYTES
# Litestar adds "; charset=utf-8" to a text/ type itself.
CSV_TYPE = "text/csv"


def _import_page(request: Request, status_code: int = 200, **context) -> Response:
    context.setdefault("values", {"source": "csv", "on_conflict": "skip"})
    context.setdefault("errors", {})
    return page(
        request,
        "import.html",
        status_code=status_code,
        sources=SOURCES,
        policies=POLICY_LABELS,
        max_mb=MAX_UPLOAD_BYTES // 2**20,
        **context,
    )


def pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 6)).decode()


def unpack(text: str) -> bytes:
    try:
        packed = base64.b64decode(text, validate=True)
        inflater = zlib.decompressobj()
        data = inflater.decompress(packed, MAX_UPLOAD_BYTES + 1)
    except (binascii.Error, zlib.error):
        raise ValidationError("file", "the checked file did not come back whole: choose it again") from None
    if len(data) > MAX_UPLOAD_BYTES or inflater.unconsumed_tail:
        raise ValidationError("file", f"is larger than {MAX_UPLOAD_BYTES // 2**20} MB")
    return data


class MovingPages(SignedInController):
    @get("/import")
    async def import_form(self, request: Request) -> Response:
        return _import_page(request)

    @post("/import", request_max_body_size=IMPORT_BODY_BYTES)
    async def import_file(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """Without `payload`: check the uploaded file (a dry run) and show the plan with a
        confirm button. With it (the confirm button): import the same file."""
        form = await request.form()
        values = {"source": forms.text(form, "source"), "on_conflict": forms.text(form, "on_conflict")}
        confirming = bool(forms.text(form, "payload"))
        try:
            await services.dashboard_limits.imports.take(session.account_id, client_address(request))
            if confirming:
                data = unpack(forms.text(form, "payload"))
            else:
                upload = form.get("file")
                data = await upload.read() if isinstance(upload, UploadFile) else b""
            report = await services.imports.run(
                session.account_id, values["source"], data, values["on_conflict"], dry_run=not confirming
            )
        except ValidationError as exc:
            return _import_page(request, 400, values=values, errors={exc.field: exc.message})
        except RateLimitedError as exc:  # said beside the file
            return _import_page(request, 429, values=values, errors={"file": exc.message})
        return _import_page(
            request,
            values=values,
            report=report,
            payload=pack(data) if report.dry_run else "",
            source_label=SOURCES[values["source"]],
        )

    @get("/export/links")
    async def export_links(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """Every link of the account as the import's generic CSV (or JSON lines), streamed."""
        format = "jsonl" if request.query_params.get("format") == "jsonl" else "csv"
        lines = services.imports.export_lines(session.account_id, format)
        return _download(lines, f"links.{format}", CSV_TYPE if format == "csv" else "application/jsonl")

    @get("/export/clicks")
    async def export_clicks(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """The raw clicks of the analytics page's range as JSON lines, streamed (no visitor identity)."""
        asked = range_query(request)
        pages = await services.imports.export_clicks(session.account_id, asked["start"], asked["end"])
        return _download(pages, "clicks.jsonl", "application/jsonl")

    @post("/links/bulk")
    async def bulk(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """The API's bulk actions on the links ticked in the list; a delete asks first."""
        form = await request.form()
        ids = [value for value in form.getall("ids", []) if isinstance(value, str) and value][:MAX_BULK_IDS]
        action = forms.text(form, "action")
        tag = forms.text(form, "tag")
        back = forms.text(form, "back")
        back = back if back.startswith("/links") and "//" not in back else "/links"
        if not ids:
            return see_other(_with(back, "bulk=none"))
        if action not in BULK_ACTIONS:
            return see_other(_with(back, "bulk=no-action"))
        if action in ("tag", "untag") and not tag:
            return see_other(_with(back, "bulk=no-tag"))
        if action == "delete" and forms.text(form, "confirm") != "1":
            links = [await services.links.get(session.account_id, link_id) for link_id in ids]
            return page(request, "links_bulk_delete.html", links=links, back=back)
        try:
            body = BulkLinkAction(
                action=action,  # type: ignore[arg-type]  # checked against BULK_ACTIONS above
                ids=ids,
                tags=[TagInput(name=tag)] if action in ("tag", "untag") else None,
            )
            results = await services.links.act_on_many(session.account_id, body)
        except ValidationError as exc:
            return page(request, "error.html", status_code=400, title="That did not work", message=exc.message)
        done = sum(result.status == 200 for result in results)
        return see_other(_with(back, f"bulk={action}&done={done}&failed={len(results) - done}"))

    @get("/analytics/csv")
    async def account_csv(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        text = await services.analytics.account_csv(session.account_id, **_range(request), sections=_sections(request))
        return _csv(text, "analytics.csv")

    @get("/links/{link_id:str}/analytics/csv")
    async def link_csv(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        text = await services.analytics.link_csv(
            session.account_id, link_id, **_range(request), sections=_sections(request)
        )
        return _csv(text, f"analytics-{link_id}.csv")


def _range(request: Request) -> dict[str, Any]:
    return range_query(request)


def _sections(request: Request) -> frozenset[str] | None:
    """The chart's section (`summary` always comes with it, so the range is known); none: all."""
    section = request.query_params.get("section")
    if section is None:
        return None
    if section not in SECTIONS:
        raise ValidationError("section", f"must be one of {', '.join(SECTIONS)}")
    return frozenset({"summary", section})


def _with(path: str, query: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}{query}"


def _csv(text: str, filename: str) -> Response:
    return Response(
        text,
        media_type=CSV_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )


def _download(lines: AsyncIterator[str], filename: str, media_type: str) -> Response:
    return Stream(
        lines,
        media_type=media_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )
