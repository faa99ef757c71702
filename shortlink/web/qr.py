"""GET /links/{id}/qr: the link's short URL as an SVG or PNG QR code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar import Controller, Response, get
from litestar.di import NamedDependency
from litestar.openapi.spec import OpenAPIHeader, OpenAPIMediaType, OpenAPIResponse, Operation, Reference, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import FromPath, HeaderParameter, QueryParameter

from shortlink import qr
from shortlink.accounts.schema import Principal
from shortlink.web.openapi import error_responses
from shortlink.wiring import Services

# The image depends on the caller's account (its custom domain), so only the
# caller's own cache may keep it. It is not immutable: connecting a custom domain
# changes the short URL it encodes. So a cache must ask each time, and the strong
# ETag makes that a 304 without a body while the image is unchanged.
CACHE_CONTROL = "private, no-cache"


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """If-None-Match uses the weak comparison: W/ prefixes are ignored; "*" matches."""
    if not if_none_match:
        return False
    tags = [tag.strip() for tag in if_none_match.split(",")]
    return "*" in tags or etag in (tag.removeprefix("W/") for tag in tags)


_CACHE_HEADERS: dict[str, OpenAPIHeader | Reference] = {
    "ETag": OpenAPIHeader(schema=Schema(type=OpenAPIType.STRING), description="Strong hash of the image"),
    "Cache-Control": OpenAPIHeader(schema=Schema(type=OpenAPIType.STRING), description=CACHE_CONTROL),
}


@dataclass
class ImageOperation(Operation):
    """Litestar documents one media type per response; the QR route has two."""

    def __post_init__(self) -> None:
        self.responses = {
            **(self.responses or {}),
            "200": OpenAPIResponse(
                description="The QR code: image/svg+xml (text) for format=svg, image/png for format=png",
                headers=_CACHE_HEADERS,
                content={
                    qr.MEDIA_TYPES["svg"]: OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING)),
                    qr.MEDIA_TYPES["png"]: OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING, format="binary")),  # type: ignore[arg-type]
                },
            ),
            "304": OpenAPIResponse(description="Not modified: If-None-Match matched the ETag", headers=_CACHE_HEADERS),
        }


class QrController(Controller):
    path = "/links"
    tags = ["links"]

    @get(
        "/{id:str}/qr",
        responses=error_responses(404),
        operation_class=ImageOperation,
        summary="QR code image of the link's short URL",
    )
    async def qr_code(
        self,
        id: FromPath[str],
        principal: NamedDependency[Principal],
        services: NamedDependency[Services],
        format: Annotated[qr.Format, QueryParameter(description="Image format")] = "svg",
        # Integers read as text: Litestar's lax parsing would take "512.0" and "1e3";
        # make_options accepts digits only, and the document still says integer.
        size: Annotated[
            str,
            QueryParameter(
                schema_extra={
                    "type": OpenAPIType.INTEGER,
                    "minimum": qr.MIN_SIZE,
                    "maximum": qr.MAX_SIZE,
                    "default": qr.DEFAULT_SIZE,
                },
                description="Width and height of the image in pixels, quiet zone included",
            ),
        ] = str(qr.DEFAULT_SIZE),
        color: Annotated[
            str,
            QueryParameter(
                pattern=qr.HEX_COLOR_PATTERN,
                description="Colour of the dark modules: #rgb or #rrggbb, # optional",
            ),
        ] = "#000000",
        bg_color: Annotated[
            str,
            QueryParameter(
                name="bgColor",
                pattern=qr.HEX_COLOR_PATTERN,
                description="Background colour: #rgb or #rrggbb, # optional; must be clearly lighter than color",
            ),
        ] = "#ffffff",
        margin: Annotated[
            str,
            QueryParameter(
                schema_extra={
                    "type": OpenAPIType.INTEGER,
                    "minimum": qr.MIN_MARGIN,
                    "maximum": qr.MAX_MARGIN,
                    "default": qr.DEFAULT_MARGIN,
                },
                description="Quiet zone around the code, in modules",
            ),
        ] = str(qr.DEFAULT_MARGIN),
        error_correction: Annotated[
            qr.ErrorCorrection, QueryParameter(name="errorCorrection", description="Minimum error-correction level")
        ] = "M",
        if_none_match: Annotated[
            str | None,
            HeaderParameter(name="If-None-Match", max_length=1024, description="ETags of copies the client holds"),
        ] = None,
    ) -> Response[bytes]:
        options = qr.make_options(
            format=format, size=size, color=color, bg_color=bg_color, margin=margin, error_correction=error_correction
        )
        image = await services.links.qr_code(principal.account_id, id, options)
        headers = {"ETag": image.etag, "Cache-Control": CACHE_CONTROL}
        if etag_matches(if_none_match, image.etag):
            return Response(content=b"", status_code=304, headers=headers)
        return Response(content=image.content, media_type=image.media_type, headers=headers)
