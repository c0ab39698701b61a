#!/usr/bin/env python3
"""Summarise a CSV file: row count, column names and totals of numeric columns, as JSON."""
import argparse
import csv
import json
import sys


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    parser.add_argument("--delimiter", default=",", help="',' (default), ';' or 'tab'")
    args = parser.parse_args()
    delimiter = "\t" if args.delimiter == "tab" else args.delimiter
    try:
        with open(args.file, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle, delimiter=delimiter))
    except OSError as error:
        print(f"cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return 2
    columns = list(rows[0].keys()) if rows else []
    totals = {}
    for column in columns:
        values = [row[column].strip() for row in rows if row[column] and row[column].strip()]
        parsed = [number(value) for value in values]
        if values and all(value is not None for value in parsed):
            totals[column] = round(sum(parsed), 6)
    print(json.dumps({"rows": len(rows), "columns": columns, "totals": totals}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
