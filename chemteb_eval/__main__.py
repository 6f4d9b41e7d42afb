from chemteb_eval.cli import main

raise SystemExit(main())
