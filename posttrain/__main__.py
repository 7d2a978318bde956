from posttrain.cli.main import main

main()
