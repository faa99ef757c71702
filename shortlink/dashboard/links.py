"""/links: the table, create, edit, pause and resume, where everyone goes, delete, QR codes."""

from __future__ import annotations

import functools
from typing import cast
from urllib.parse import urlencode

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink import qr
from shortlink.accounts.schema import SessionAccount
from shortlink.dashboard import forms
from shortlink.dashboard.guard import SignedInController, provide_session
from shortlink.dashboard.render import page, see_other
from shortlink.errors import ValidationError
from shortlink.link_rules.schema import Destination
from shortlink.links.platforms import Platform
from shortlink.links.schema import LinkFilter, LinkSort, UpdateLink
from shortlink.links.tags import SetTags, Tag
from shortlink.wiring import Services

PAGE_SIZE = 20
ACTIVE_CHOICES = {"": None, "active": True, "paused": False}
QR_FIELDS = ("size", "color", "bgColor", "margin", "errorCorrection")


# The list's orders as the Sort field names them; the first is the default.
SORT_LABELS = {
    "-created": "Newest first",
    "created": "Oldest first",
    "-clicks": "Most clicks first",
    "clicks": "Fewest clicks first",
    "code": "Short code, A to Z",
    "-code": "Short code, Z to A",
}
# The sortable columns: (column, heading, the order a click on a column not sorted by gives).
SORT_COLUMNS = (("code", "Short URL", "code"), ("created", "Created", "-created"), ("clicks", "Clicks", "-clicks"))


def link_filter(request: Request) -> tuple[LinkFilter, dict[str, str]]:
    """The API's filters and the list's order from the query string; a bad value is reported
    beside its field, and the list is shown without it."""
    query = request.query_params
    errors: dict[str, str] = {}
    platform = None
    if query.get("platform"):
        try:
            platform = Platform(query["platform"])
        except ValueError:
            errors["platform"] = "platform: not a platform this service knows"
    sort = query.get("sort") or "-created"
    if sort not in SORT_LABELS:
        errors["sort"] = "sort: not an order this list knows; newest first is shown"
        sort = "-created"
    page_text = query.get("page", "1")
    page_number = int(page_text) if page_text.isdigit() and 0 < int(page_text) < 10**6 else 1
    search = (query.get("search") or "").strip()[:200] or None
    active = ACTIVE_CHOICES.get(query.get("state", ""))
    tag = (query.get("tag") or "").strip()[:40] or None
    return LinkFilter(
        page=page_number,
        limit=PAGE_SIZE,
        search=search,
        platform=platform,
        is_active=active,
        tag=tag,
        sort=cast(LinkSort, sort),  # one of SORT_LABELS, whose keys are LinkSort's
    ), errors


LIST_DEFAULTS = {("page", "1"), ("sort", "-created")}


def list_href(query: LinkFilter, state: str, **changes: str | None) -> str:
    """/links with the filters and order of `query` (those it holds) and `changes` (None
    leaves a parameter out): the address of a page, a sorted column or a tag, which keeps
    what the person chose."""
    params: dict[str, str | None] = {
        "search": query.search,
        "platform": query.platform.value if query.platform else None,
        "state": state if state in ACTIVE_CHOICES else None,
        "tag": query.tag,
        "sort": query.sort,
        "page": None,
    } | changes
    # The defaults are left out: the first page, newest first.
    kept = {name: value for name, value in params.items() if value and (name, value) not in LIST_DEFAULTS}
    return "/links" + (f"?{urlencode(kept)}" if kept else "")


def sort_columns(query: LinkFilter, state: str) -> dict[str, dict[str, str | None]]:
    """Each sortable column's aria-sort (None when the list is not in its order) and the
    address its heading links to: the other direction when sorted by it, else its first."""
    columns: dict[str, dict[str, str | None]] = {}
    for column, heading, first in SORT_COLUMNS:
        if query.sort.lstrip("-") == column:
            direction = "descending" if query.sort.startswith("-") else "ascending"
            order = column if query.sort.startswith("-") else "-" + column
        else:
            direction, order = None, first
        columns[column] = {"heading": heading, "aria_sort": direction, "href": list_href(query, state, sort=order)}
    return columns


BULK_DONE = {"pause": "paused", "resume": "resumed", "delete": "deleted", "tag": "tagged", "untag": "untagged"}
BULK_PROBLEMS = {
    "none": "Tick at least one link first.",
    "no-action": "Choose an action.",
    "no-tag": "Type the tag to add or remove.",
}


def bulk_message(request: Request) -> dict[str, object] | None:
    """What the last bulk action did (shortlink.dashboard.moving redirects here with it)."""
    query = request.query_params
    action = query.get("bulk", "")
    if action in BULK_PROBLEMS:
        return {"ok": False, "message": BULK_PROBLEMS[action]}
    if action not in BULK_DONE:
        return None
    done, failed = query.get("done", "0"), query.get("failed", "0")
    done_count = int(done) if done.isdigit() else 0
    failed_count = int(failed) if failed.isdigit() else 0
    message = f"{done_count} link{'' if done_count == 1 else 's'} {BULK_DONE[action]}."
    if failed_count:
        message += f" {failed_count} could not be (deleted since, or too many tags)."
    return {"ok": not failed_count, "message": message}


async def links_page(request: Request) -> Response:
    services: Services = request.app.state.services
    session = provide_session(request, services)
    query, errors = link_filter(request)
    links, pagination, link_tags = await services.links.list_with_tags(session.account_id, query)
    destinations = await services.link_rules.everyone_urls(session.account_id, [link.id for link in links])
    state = request.query_params.get("state", "")
    return page(
        request,
        "links.html",
        links=links,
        link_tags=link_tags,
        destinations=destinations,
        pagination=pagination,
        query=query,
        state=state,
        platforms=list(Platform),
        sorts=SORT_LABELS,
        columns=sort_columns(query, state),
        href=functools.partial(list_href, query, state),
        errors=errors,
        deleted=request.query_params.get("deleted") == "1",
        tags=await services.links.account_tags(session.account_id),
        actions=BULK_ACTIONS,
        bulk=bulk_message(request),
        back=_back(request),
    )


BULK_ACTIONS = {"pause": "Pause", "resume": "Resume", "delete": "Delete", "tag": "Add a tag", "untag": "Remove a tag"}


def _back(request: Request) -> str:
    """This list with its filters, without the last bulk action's message."""
    kept = {name: value for name, value in request.query_params.items() if name not in ("bulk", "done", "failed")}
    return "/links" + (f"?{urlencode(kept)}" if kept else "")


def qr_options(request: Request, format: str = "svg") -> tuple[qr.QrOptions, dict[str, str], ValidationError | None]:
    """The QR options of the query string as `qr.make_options` checks them for the API:
    (options, the values as typed, the error, when there is one: defaults are used)."""
    values = {name: request.query_params.get(name, "") for name in QR_FIELDS}
    given = {name: value for name, value in values.items() if value}
    try:
        return (
            qr.make_options(
                format=format,
                size=given.get("size", str(qr.DEFAULT_SIZE)),
                color=given.get("color", "#000000"),
                bg_color=given.get("bgColor", "#ffffff"),
                margin=given.get("margin", str(qr.DEFAULT_MARGIN)),
                error_correction=given.get("errorCorrection", "M"),
            ),
            values,
            None,
        )
    except ValidationError as exc:
        return qr.make_options(format=format), values, exc


class LinkPages(SignedInController):
    path = "/links"

    @get("/")
    async def index(self, request: Request) -> Response:
        return await links_page(request)

    @get("/new")
    async def new(self, request: Request) -> Response:
        return page(request, "link_new.html", values={}, errors={})

    @post("/")
    async def create(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        form = await request.form()
        try:
            body = forms.create_link(form)
            tags = services.links.checked_tags(forms.link_tags(form))
            link = await services.links.create(session.account_id, body, source="DASHBOARD", tags=tags)
        except ValidationError as exc:
            values = {name: forms.text(form, name) for name in (*forms.CREATE_FIELDS, "tags") if name != "password"}
            return page(request, "link_new.html", status_code=400, values=values, errors={exc.field: exc.message})
        return see_other(f"/links/{link.id}?created=1")

    @get("/{link_id:str}")
    async def show(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        link = await services.links.get(session.account_id, link_id)
        tags = (await services.links.tags(session.account_id, link_id)).tags
        return self._link_page(request, link, tags, await services.link_rules.destination(session.account_id, link_id))

    def _link_page(
        self,
        request: Request,
        link,
        tags: list[Tag],
        destination: Destination,
        status_code: int = 200,
        errors: dict | None = None,
        tags_typed: str | None = None,
        destination_typed: str = "",
    ) -> Response:
        options, qr_values, qr_error = qr_options(request)
        query = {
            "size": options.size,
            "color": options.color,
            "bgColor": options.bg_color,
            "margin": options.margin,
            "errorCorrection": options.error_correction,
        }
        return page(
            request,
            "link.html",
            status_code=status_code,
            link=link,
            tags=tags,
            destination=destination,
            destination_typed=destination_typed,
            tags_value=", ".join(tag.name for tag in tags) if tags_typed is None else tags_typed,
            tag_href=functools.partial(list_href, LinkFilter(), ""),
            expiry=forms.expiry_input(link.expires_at),
            errors=errors or {},
            qr=query,
            qr_values=qr_values,
            qr_errors={} if qr_error is None else {qr_error.field: qr_error.message},
            qr_levels=qr.ERROR_CORRECTIONS,
            created=request.query_params.get("created") == "1",
            saved=request.query_params.get("saved") == "1",
            moved=request.query_params.get("moved") == "1",
        )

    @post("/{link_id:str}")
    async def update(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        link = await services.links.get(session.account_id, link_id)
        tags = (await services.links.tags(session.account_id, link_id)).tags
        form = await request.form()
        try:
            checked = services.links.checked_tags(forms.link_tags(form)) if "tags" in form else None
            new_tags = forms.changed_tags(checked, tags)  # checked before anything is saved
            patch = forms.update_link(form, link)
            if patch is not None:
                await services.links.update(session.account_id, link_id, patch)
            if new_tags is not None:
                await services.links.set_tags(session.account_id, link_id, SetTags(new_tags))
        except ValidationError as exc:
            typed = forms.text(form, "tags") if "tags" in form else None
            destination = await services.link_rules.destination(session.account_id, link_id)
            return self._link_page(request, link, tags, destination, 400, {exc.field: exc.message}, typed)
        return see_other(f"/links/{link_id}?saved=1")

    @post("/{link_id:str}/destination")
    async def send_everyone(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        typed = forms.text(await request.form(), "destination")
        try:
            if not typed:
                raise ValidationError("url", "type the address to send everyone to")
            await services.link_rules.send_everyone_to(session.account_id, link_id, typed, door="dashboard")
        except ValidationError as exc:
            link = await services.links.get(session.account_id, link_id)
            tags = (await services.links.tags(session.account_id, link_id)).tags
            destination = await services.link_rules.destination(session.account_id, link_id)
            errors = {"destination": exc.message.removeprefix(f"{exc.field}: ")}
            return self._link_page(request, link, tags, destination, 400, errors, destination_typed=typed)
        return see_other(f"/links/{link_id}?moved=1#destination-heading")

    @post("/{link_id:str}/destination/original")
    async def send_back(
        self, link_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.link_rules.send_everyone_back(session.account_id, link_id, door="dashboard")
        return see_other(f"/links/{link_id}?moved=1#destination-heading")

    @post("/{link_id:str}/active")
    async def set_active(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        active = (await request.form()).get("active") == "true"
        await services.links.update(session.account_id, link_id, UpdateLink(is_active=active))
        return see_other(f"/links/{link_id}?saved=1")

    @get("/{link_id:str}/delete")
    async def confirm_delete(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        link = await services.links.get(session.account_id, link_id)
        return page(request, "link_delete.html", link=link)

    @post("/{link_id:str}/delete")
    async def delete(
        self, link_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.links.delete(session.account_id, link_id)
        return see_other("/links?deleted=1")

    @get("/{link_id:str}/qr")
    async def qr_code(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        """The image the API's QR route makes, with the same options and checks."""
        format = request.query_params.get("format", "svg")
        options, _, error = qr_options(request, format)
        if error is not None:
            raise error
        image = await services.links.qr_code(session.account_id, link_id, options)
        link = await services.links.get(session.account_id, link_id)
        headers = {"Cache-Control": "private, no-cache", "X-Content-Type-Options": "nosniff"}
        if request.query_params.get("download"):
            headers["Content-Disposition"] = f'attachment; filename="{link.short_code}.{format}"'
        return Response(content=image.content, media_type=image.media_type, headers=headers)
