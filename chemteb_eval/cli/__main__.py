"""``python -m chemteb_eval.cli``."""

from . import main

raise SystemExit(main())
