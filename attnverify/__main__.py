from attnverify.cli import main

raise SystemExit(main())
