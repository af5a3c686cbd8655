"""`python -m graphsvc.cli`."""

from graphsvc.cli.main import main

raise SystemExit(main())
