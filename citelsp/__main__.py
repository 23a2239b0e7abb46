from citelsp.cli import run

run()
