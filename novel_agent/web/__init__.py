"""`novel serve`: the book and its daemon in a browser, over the same files as the CLI.

    site.py        Site: the projects served (by name only: no path from a URL is
                   ever opened), and what the server was told (env, the `novel` command)
    security.py    the token, cross-site request protection, the Host check, headers,
                   and errors as short 4xx/5xx pages (never a traceback)
    pages.py       what each page shows, as plain data read through the library
                   (status, scenes, memory, lore, steer, stats, usage, context)
    edits.py       what the pages write: the author's note and lore entries, checked
                   as `novel lore` checks them before anything is written
    live.py        the daemon from the page: `novel run` started in the background
                   (under the project lock, like any run), stopped with `novel stop`'s
                   signal, and watched as Server-Sent Events
    app.py         create_app(site): the Starlette routes, thin over the above

Templates (Jinja2, autoescaped) are in `templates/`; `static/` holds htmx (shipped
in the package, never from a CDN), the stylesheet and the live page's script.
"""
