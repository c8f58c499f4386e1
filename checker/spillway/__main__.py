from spillway.launch import main

raise SystemExit(main())
