"""python -m virtbench.foundations.model --schema | --doc: the report's JSON Schema or its field page."""
import sys

from .schema import doc_text, schema_text

if __name__ == "__main__":
    if sys.argv[1:] == ["--schema"]:
        sys.stdout.write(schema_text())
    elif sys.argv[1:] == ["--doc"]:
        sys.stdout.write(doc_text())
    else:
        sys.stderr.write("usage: python -m virtbench.foundations.model --schema | --doc\n")
        sys.exit(2)
