from attnverify.cli.main import main

raise SystemExit(main())
