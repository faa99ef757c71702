"""GET /links/{id}/qr: codes that scan to the short URL, exact sizes, validation, caching."""

from __future__ import annotations

import io
import re

import pytest
import zxingcpp
from PIL import Image

from shortlink import qr
from shortlink.accounts import service as accounts
from shortlink.errors import ValidationError
from tests.conftest import bearer
from tests.support.helpers import wait_for_domain


@pytest.fixture
def link(client, auth) -> dict:
    response = client.post("/api/v1/links", json={"originalUrl": "https://example.com/some/page"}, headers=auth)
    assert response.status_code == 201
    return response.json()["data"]


def qr_get(client, auth, link_id: str, **params):
    return client.get(f"/api/v1/links/{link_id}/qr", params=params, headers=auth)


def decode(image: Image.Image) -> zxingcpp.Barcode:
    found = zxingcpp.read_barcodes(image)
    assert len(found) == 1, "exactly one QR code must be found"
    return found[0]


def svg_to_image(svg: str) -> Image.Image:
    """Rasterise segno's SVG (horizontal runs of dark modules) at 10 pixels a module."""
    side = int(re.search(r'viewBox="0 0 (\d+) \1"', svg).group(1))
    image = Image.new("L", (side * 10, side * 10), 255)
    path = re.search(r'<path class="qrline"[^>]* d="([^"]+)"', svg).group(1)
    x = y = 0.0
    for command, first, second in re.findall(r"([Mmh])(-?[\d.]+)(?: (-?[\d.]+))?", path):
        if command == "M":
            x, y = float(first), float(second)
        elif command == "m":
            x, y = x + float(first), y + float(second)
        else:  # h: a run of dark modules along the row whose centre line is y
            length = float(first)
            image.paste(0, (round(x * 10), round((y - 0.5) * 10), round((x + length) * 10), round((y + 0.5) * 10)))
            x += length
    return image


@pytest.mark.parametrize(
    "params",
    [
        {"size": 128},
        {"size": 512},
        {"size": 2048},
        {"size": 333, "margin": 0},
        {"size": 700, "margin": 16, "errorCorrection": "H"},
        {"size": 256, "errorCorrection": "L", "color": "1a237e", "bgColor": "#fff8e1"},
        {"size": 999, "errorCorrection": "Q", "color": "#036", "bgColor": "FE9"},
    ],
)
def test_png_scans_to_the_short_url_at_exactly_the_requested_size(client, auth, link, params):
    response = qr_get(client, auth, link["id"], format="png", **params)
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(response.content))
    assert image.size == (params["size"], params["size"])
    code = decode(image)
    assert code.text == link["shortUrl"]
    # The requested level is a minimum: segno may raise it when the symbol stays the same.
    levels = "LMQH"
    assert levels.index(code.ec_level) >= levels.index(params.get("errorCorrection", "M"))
    # The quiet zone of `margin` modules is inside the image on every side.
    modules = 17 + 4 * int(code.extra["Version"])
    left, right = code.position.top_left.x, code.position.bottom_right.x
    module_px = (right - left) / modules
    margin = params.get("margin", 4)
    assert left >= margin * module_px and params["size"] - right >= margin * module_px


def test_png_uses_the_requested_colours(client, auth, link):
    response = qr_get(client, auth, link["id"], format="png", size=300, color="#1A237E", bgColor="fff8e1")
    colours = {rgb for _, rgb in Image.open(io.BytesIO(response.content)).convert("RGB").getcolors()}
    assert colours == {(0x1A, 0x23, 0x7E), (0xFF, 0xF8, 0xE1)}


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"size": 128, "margin": 0},
        {"size": 2048, "margin": 16, "errorCorrection": "H", "color": "#303", "bgColor": "#eeeeee"},
    ],
)
def test_svg_is_exactly_size_pixels_with_a_viewbox_in_modules_and_scans(client, auth, link, params):
    response = qr_get(client, auth, link["id"], **params)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    svg = response.text
    size, margin = params.get("size", 512), params.get("margin", 4)
    assert re.search(rf'<svg [^>]*width="{size}" height="{size}"', svg)
    code = decode(svg_to_image(svg))
    assert code.text == link["shortUrl"]
    modules = 17 + 4 * int(code.extra["Version"])
    assert f'viewBox="0 0 {modules + 2 * margin} {modules + 2 * margin}"' in svg


def test_svg_and_png_of_one_link_encode_the_same_symbol(client, auth, link):
    svg = qr_get(client, auth, link["id"], size=400).text
    png = decode(Image.open(io.BytesIO(qr_get(client, auth, link["id"], format="png", size=400).content)))
    assert decode(svg_to_image(svg)).extra["Version"] == png.extra["Version"]


def test_custom_domain_short_url_is_what_the_code_encodes(client, auth, link, conn):
    accounts.add_domain(conn, "owner@example.com", "go.example.org")
    wait_for_domain(client, "go.example.org")
    short_url = client.get(f"/api/v1/links/{link['id']}", headers=auth).json()["data"]["shortUrl"]
    assert short_url == f"https://go.example.org/l/{link['shortCode']}"
    response = qr_get(client, auth, link["id"], format="png", size=256)
    assert decode(Image.open(io.BytesIO(response.content))).text == short_url


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"format": "gif"}, "format"),
        ({"format": ""}, "format"),
        ({"size": 127}, "size"),
        ({"size": 2049}, "size"),
        ({"size": "big"}, "size"),
        ({"size": "512.5"}, "size"),
        ({"size": "512.0"}, "size"),  # integers only, written as digits only
        ({"size": "1e3"}, "size"),
        ({"size": "1E3"}, "size"),
        ({"size": "+512"}, "size"),
        ({"size": " 512"}, "size"),
        ({"size": "0x200"}, "size"),
        ({"size": "５１２"}, "size"),  # fullwidth digits, which int() would take
        ({"size": ""}, "size"),
        ({"margin": "4.0"}, "margin"),
        ({"margin": "+4"}, "margin"),
        ({"margin": -1}, "margin"),
        ({"margin": 17}, "margin"),
        ({"errorCorrection": "X"}, "errorCorrection"),
        ({"color": "red"}, "color"),
        ({"color": "#12345"}, "color"),
        ({"bgColor": "#gggggg"}, "bgColor"),
        ({"color": "#777", "bgColor": "#888"}, "color"),  # too little contrast to scan
        ({"color": "#fff", "bgColor": "#000"}, "color"),  # inverted codes defeat many scanners
    ],
)
def test_invalid_parameter_is_400_naming_it(client, auth, link, params, named):
    response = qr_get(client, auth, link["id"], **params)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["message"].startswith(f"{named}:")


def test_matching_if_none_match_is_304_with_the_same_validators(client, auth, link):
    first = qr_get(client, auth, link["id"], format="png")
    etag = first.headers["etag"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
    # Only the caller's cache may keep it, and it must ask again each time (see below).
    assert first.headers["cache-control"] == "private, no-cache"
    url = f"/api/v1/links/{link['id']}/qr?format=png"
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = client.get(url, headers={**auth, "If-None-Match": header})
        assert again.status_code == 304, header
        assert again.content == b""
        assert again.headers["etag"] == etag
        assert again.headers["cache-control"] == first.headers["cache-control"]
    stale = client.get(url, headers={**auth, "If-None-Match": '"0123"'})
    assert stale.status_code == 200 and stale.content == first.content


def test_a_cached_image_is_replaced_once_a_custom_domain_changes_the_short_url(client, auth, link, conn):
    # Same link, same options, yet a new image: a copy cached as immutable would go on
    # showing the old short URL, so caches revalidate and the changed ETag brings the new one.
    url = f"/api/v1/links/{link['id']}/qr?format=png&size=256"
    before = client.get(url, headers=auth)
    assert "no-cache" in before.headers["cache-control"] and "immutable" not in before.headers["cache-control"]
    accounts.add_domain(conn, "owner@example.com", "go.example.org")
    wait_for_domain(client, "go.example.org")
    after = client.get(url, headers={**auth, "If-None-Match": before.headers["etag"]})
    assert after.status_code == 200 and after.headers["etag"] != before.headers["etag"]
    assert decode(Image.open(io.BytesIO(after.content))).text == f"https://go.example.org/l/{link['shortCode']}"
    assert client.get(url, headers={**auth, "If-None-Match": after.headers["etag"]}).status_code == 304


def test_size_and_margin_accept_plain_digits(client, auth, link):
    assert (
        qr_get(client, auth, link["id"], size="0512").headers["etag"]
        == qr_get(client, auth, link["id"], size="512").headers["etag"]
    )


def test_etag_differs_between_options_and_is_stable_for_the_same(client, auth, link):
    tags = {
        qr_get(client, auth, link["id"], **params).headers["etag"]
        for params in ({}, {"format": "png"}, {"size": 600}, {"color": "#123"}, {"margin": 2})
    }
    assert len(tags) == 5
    assert qr_get(client, auth, link["id"]).headers["etag"] == qr_get(client, auth, link["id"]).headers["etag"]


def test_repeated_requests_are_served_from_the_cache(client, auth, link):
    params = {"format": "png", "size": 1234, "color": "#2e7d32"}
    before = qr.render.cache_info()
    first = qr_get(client, auth, link["id"], **params)
    after_first = qr.render.cache_info()
    second = qr_get(client, auth, link["id"], **params)
    after_second = qr.render.cache_info()
    assert after_first.misses == before.misses + 1
    assert after_second.misses == after_first.misses
    assert after_second.hits == after_first.hits + 1
    assert second.content == first.content


def test_another_accounts_link_is_404(client, link, new_key):
    stranger = bearer(new_key("stranger@example.com"))
    response = client.get(f"/api/v1/links/{link['id']}/qr", headers=stranger)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert client.get("/api/v1/links/lnk_doesnotexist/qr", headers=stranger).status_code == 404


def test_without_a_key_is_401(client, link):
    response = client.get(f"/api/v1/links/{link['id']}/qr")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_openapi_documents_the_image_responses_and_bounded_parameters(client):
    document = client.get("/api/v1/schema/openapi.json").json()
    operation = document["paths"]["/api/v1/links/{id}/qr"]["get"]
    assert set(operation["responses"]["200"]["content"]) == {"image/svg+xml", "image/png"}
    assert {"304", "400", "401", "403", "404", "429", "500"} <= set(operation["responses"])
    schemas = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert schemas["format"]["enum"] == ["svg", "png"]
    assert schemas["size"]["type"] == schemas["margin"]["type"] == "integer"
    assert (schemas["size"]["default"], schemas["margin"]["default"]) == (qr.DEFAULT_SIZE, qr.DEFAULT_MARGIN)
    assert (schemas["size"]["minimum"], schemas["size"]["maximum"]) == (qr.MIN_SIZE, qr.MAX_SIZE)
    assert (schemas["margin"]["minimum"], schemas["margin"]["maximum"]) == (qr.MIN_MARGIN, qr.MAX_MARGIN)
    assert schemas["errorCorrection"]["enum"] == ["L", "M", "Q", "H"]
    assert schemas["color"]["pattern"] == schemas["bgColor"]["pattern"] == qr.HEX_COLOR_PATTERN


def test_options_are_normalised_and_checked_without_http():
    options = qr.make_options(color="123", bg_color="#FfEeDd")
    assert (options.color, options.bg_color) == ("#112233", "#ffeedd")
    with pytest.raises(ValidationError) as failure:
        qr.make_options(size=64)
    assert failure.value.field == "size"
    with pytest.raises(ValidationError) as failure:
        qr.make_options(format="jpeg")
    assert failure.value.field == "format"


def test_a_symbol_that_cannot_fit_the_size_is_a_size_error():
    # A very long URL needs a symbol wider than 128 pixels can show, one pixel a module.
    options = qr.make_options(format="png", size=128, margin=16, error_correction="H")
    with pytest.raises(ValidationError) as failure:
        qr.render("https://sho.rt/l/" + "a" * 1000, options)
    assert failure.value.field == "size"
