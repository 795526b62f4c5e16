"""A browser page of the site that may load only from the local server (conftest.py's
``page``, and the views of test_site_browser.py at other widths and colour schemes)."""

from __future__ import annotations


def local_page(browser, base_url, wait_ms, **context_args):
    """(context, page, the outside URLs it asked for): a page of a new context whose requests
    outside the local server are refused and recorded."""
    context = browser.new_context(**context_args)
    context.set_default_timeout(wait_ms)
    page = context.new_page()
    outside = []

    def route(r):
        if r.request.url.startswith(base_url) or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.base = base_url
    return context, page, outside
