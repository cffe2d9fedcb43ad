from dpaudit.cli import main

main()
