"""The tooling of provider packages, apart from the hub so a child process running the
contract kit starts in a fraction of a second: unpacking and importing a verified package
(``loader``), ``lineup provider test`` (``kit_runner``), and ``keygen`` / ``pack`` / ``new``
(``authoring``, ``template``)."""
