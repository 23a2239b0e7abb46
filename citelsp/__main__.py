from citelsp.cli import main

raise SystemExit(main())
