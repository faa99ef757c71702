"""/bio: the account's bio page (handle, title, description, published), its QR code, its
buttons (add, create, relabel, hide, show, move, remove) and its statistics, over `services.bio`.

Every change is a plain form POST that redirects back to /bio with `?done=<what>`, which
the page says in words; a refused change shows the page again with the application
layer's message beside the field it names.
"""

from __future__ import annotations

from litestar import Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from shortlink import qr
from shortlink.accounts.schema import SessionAccount
from shortlink.analytics.ranges import DEFAULT_DAYS
from shortlink.bio.schema import BioButton, BioPage
from shortlink.dashboard import forms
from shortlink.dashboard.analytics import PRESETS
from shortlink.dashboard.charts import percent_text
from shortlink.dashboard.guard import SignedInController
from shortlink.dashboard.render import page, see_other
from shortlink.errors import ConflictError, NotFoundError, ValidationError
from shortlink.links.schema import LinkFilter
from shortlink.wiring import Services

DONE = {
    "saved": "The page was saved.",
    "deleted": "The page was deleted. Its links stay in your account.",
    "added": "The button was added at the end.",
    "created": "The link was created and added as a button at the end.",
    "labelled": "The button's text was saved.",
    "hidden": "The button is hidden: visitors no longer see it.",
    "shown": "The button is shown again.",
    "moved": "The buttons were reordered.",
    "removed": "The button was removed from the page. The link itself stays.",
}
LINK_CHOICES = 100  # the newest links offered in the "add a link" list (a search narrows it)
QR_SIZE = 512
STEPS = {"up": -1, "down": 1}


async def page_or_none(services: Services, account_id: int) -> BioPage | None:
    try:
        return await services.bio.page(account_id)
    except NotFoundError:
        return None


async def button_of(services: Services, account_id: int, link_id: str) -> BioButton:
    page = await services.bio.page(account_id)
    button = next((button for button in page.buttons if button.link_id == link_id), None)
    if button is None:
        raise NotFoundError(f"Link {link_id} is not on the page")
    return button


class BioPages(SignedInController):
    path = "/bio"

    async def _editor(
        self,
        request: Request,
        session: SessionAccount,
        services: Services,
        status_code: int = 200,
        errors: dict[str, str] | None = None,
        values: dict | None = None,
    ) -> Response:
        bio = await page_or_none(services, session.account_id)
        find = (request.query_params.get("find") or "").strip()[:200]
        choices = []
        if bio is not None:
            links, _ = await services.links.list(
                session.account_id, LinkFilter(limit=LINK_CHOICES, search=find or None)
            )
            on_page = {button.link_id for button in bio.buttons}
            choices = [link for link in links if link.id not in on_page]
        if values is None and bio is not None:
            values = {
                "handle": bio.handle,
                "title": bio.title,
                "description": bio.description,
                "isPublished": bio.is_published,
            }
        return page(
            request,
            "bio.html",
            status_code=status_code,
            bio=bio,
            values=values or {},
            errors=errors or {},
            choices=choices,
            find=find,
            done=DONE.get(request.query_params.get("done", "")),
        )

    @get("/")
    async def index(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        return await self._editor(request, session, services)

    @post("/")
    async def save(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        form = await request.form()
        try:
            await services.bio.save(session.account_id, forms.save_bio_page(form))
        except (ValidationError, ConflictError) as exc:
            # The only conflict a save can meet is a handle another page has.
            field = exc.field if isinstance(exc, ValidationError) else "handle"
            values: dict[str, str | bool] = {name: forms.text(form, name) for name in forms.BIO_PAGE_FIELDS}
            values["isPublished"] = bool(form.get("isPublished"))
            return await self._editor(request, session, services, 400, {field: exc.message}, values)
        return see_other("/bio?done=saved")

    @get("/delete")
    async def confirm_delete(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        return page(request, "bio_delete.html", bio=await services.bio.page(session.account_id))

    @post("/delete")
    async def delete(self, session: NamedDependency[SessionAccount], services: NamedDependency[Services]) -> Response:
        await services.bio.delete(session.account_id)
        return see_other("/bio?done=deleted")

    @get("/qr")
    async def qr_code(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """The page's QR code as /@<handle>/qr.svg|png draws it, before it is published too."""
        format = request.query_params.get("format", "svg")
        if format not in ("svg", "png"):
            raise ValidationError("format", "must be svg or png")
        bio = await services.bio.page(session.account_id)
        image = qr.render(bio.url, qr.QrOptions(format=format, size=QR_SIZE))  # type: ignore[arg-type]
        headers = {"Cache-Control": "private, no-cache", "X-Content-Type-Options": "nosniff"}
        if request.query_params.get("download"):
            headers["Content-Disposition"] = f'attachment; filename="{bio.handle}.{format}"'
        return Response(content=image.content, media_type=image.media_type, headers=headers)

    @post("/buttons")
    async def add(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        form = await request.form()
        try:
            await services.bio.add_button(
                session.account_id, forms.text(form, "linkId"), forms.text(form, "label") or None
            )
        except ValidationError as exc:
            return await self._editor(request, session, services, 400, {exc.field: exc.message})
        return see_other("/bio?done=added")

    @get("/buttons/new")
    async def new_button(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        bio = await services.bio.page(session.account_id)
        return page(request, "bio_button_new.html", bio=bio, values={}, errors={})

    @post("/buttons/new")
    async def create(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        form = await request.form()
        try:
            await services.bio.create_button(
                session.account_id, forms.create_link(form), forms.text(form, "label") or None
            )
        except ValidationError as exc:
            bio = await services.bio.page(session.account_id)
            values = {name: forms.text(form, name) for name in ("originalUrl", "title", "label")}
            return page(
                request, "bio_button_new.html", status_code=400, bio=bio, values=values, errors={exc.field: exc.message}
            )
        return see_other("/bio?done=created")

    @post("/buttons/{link_id:str}/hidden")
    async def set_hidden(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        hidden = (await request.form()).get("hidden") == "true"
        await services.bio.update_button(session.account_id, link_id, is_hidden=hidden)
        return see_other("/bio?done=" + ("hidden" if hidden else "shown"))

    @post("/buttons/{link_id:str}/move")
    async def move(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        step = STEPS.get(forms.text(await request.form(), "direction"))
        if step is None:
            raise ValidationError("direction", "must be up or down")
        await services.bio.move(session.account_id, link_id, step)
        return see_other("/bio?done=moved")

    @get("/buttons/{link_id:str}/label")
    async def label_form(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        button = await button_of(services, session.account_id, link_id)
        return page(request, "bio_button_label.html", button=button, value=button.custom_label or "", errors={})

    @post("/buttons/{link_id:str}/label")
    async def relabel(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        label = forms.text(await request.form(), "label")
        try:
            await services.bio.update_button(session.account_id, link_id, label=label or None)
        except ValidationError as exc:
            button = await button_of(services, session.account_id, link_id)
            errors = {exc.field: exc.message}
            return page(request, "bio_button_label.html", status_code=400, button=button, value=label, errors=errors)
        return see_other("/bio?done=labelled")

    @get("/buttons/{link_id:str}/remove")
    async def confirm_remove(
        self,
        request: Request,
        link_id: FromPath[str],
        session: NamedDependency[SessionAccount],
        services: NamedDependency[Services],
    ) -> Response:
        button = await button_of(services, session.account_id, link_id)
        return page(request, "bio_button_remove.html", button=button)

    @post("/buttons/{link_id:str}/remove")
    async def remove(
        self, link_id: FromPath[str], session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        await services.bio.remove_button(session.account_id, link_id)
        return see_other("/bio?done=removed")

    @get("/stats")
    async def stats(
        self, request: Request, session: NamedDependency[SessionAccount], services: NamedDependency[Services]
    ) -> Response:
        """Views per day and each button's clicks through the page, for a preset period."""
        days_text = request.query_params.get("days") or str(DEFAULT_DAYS)
        errors: dict[str, str] = {}
        try:
            figures = await services.bio.stats(session.account_id, int(days_text) if days_text.isdigit() else 0)
        except ValidationError as exc:
            errors[exc.field] = exc.message
            figures = await services.bio.stats(session.account_id, DEFAULT_DAYS)
        views = figures.total_views
        rows = [(button, percent_text(100 * button.clicks / views) if views else "—") for button in figures.buttons]
        return page(
            request,
            "bio_stats.html",
            status_code=400 if errors else 200,
            bio=await services.bio.page(session.account_id),
            figures=figures,
            by_day=[(day.day, day.views) for day in figures.views_by_day],
            rows=rows,
            presets=PRESETS,
            days=days_text,
            errors=errors,
        )
