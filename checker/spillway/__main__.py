from spillway.cli import main

raise SystemExit(main())
