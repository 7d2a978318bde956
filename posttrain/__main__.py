from posttrain.cli.entry import main

main()
