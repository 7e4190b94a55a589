"""Pages people read: the generated instruction reference (``tilecheck doc``) and verification
reports (``tilecheck verify ... --html``), rendered with Jinja2 templates and Matplotlib plots (SVG,
embedded). Both come with the ``report`` extra (``pip install 'tilecheck[report]'``);
:func:`tilecheck.report.render.environment` says what to install when it is missing.
"""
