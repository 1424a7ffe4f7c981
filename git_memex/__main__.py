from git_memex.main import main

raise SystemExit(main())
