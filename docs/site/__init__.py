"""The docs site generator: each case module executed once, written as a notebook and a page,
then rendered by Sphinx + MyST-NB into ``build/site``. ``python -m docs.site.build``."""
