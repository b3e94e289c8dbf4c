from gmtool.cli import main

main()
