"""``python -m sanctum`` — the same command line as the ``sanctum`` script."""

from sanctum.cli.entry import main

if __name__ == "__main__":
    main()
