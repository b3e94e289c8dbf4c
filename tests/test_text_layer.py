"""Text-layer health: a scanned PDF is never a silently empty book (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pdfgen
from fpdf import FPDF
from typer.testing import CliRunner

from gmtool.cli import app

runner = CliRunner()


def _half_scanned_pdf(path: Path) -> Path:
    """One page with a text layer, then three pages that are only drawings (as a scan looks)."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 12, "Torchlight Rules", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(0, 6, "A torch burns for one hour and sheds light for thirty feet.")
    for _ in range(3):
        pdf.add_page()
        pdf.rect(20, 20, 170, 200, style="D")
    pdf.output(str(path))
    return path


def test_ls_reports_scanned_books_with_a_code_and_the_ocr_fix(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    pdfgen.make_image_only_pdf(lib / "scanned.pdf")
    _half_scanned_pdf(lib / "half.pdf")
    pdfgen.make_plain_pdf(lib / "plain.pdf")

    scan = runner.invoke(app, ["scan", str(lib), "--no-embed", "--json"])
    assert scan.exit_code == 3, scan.output  # one file failed, the rest is indexed
    failed = {f["file"]: f for f in json.loads(scan.stdout)["failed"]}
    assert failed["scanned.pdf"]["code"] == "NO_TEXT_LAYER"
    assert "ocr" in failed["scanned.pdf"]["hint"].lower()

    ls = runner.invoke(app, ["ls", "-L", str(lib), "--json"])
    assert ls.exit_code == 0, ls.output
    data = json.loads(ls.stdout)
    assert {s["file"] for s in data["sources"]} == {"half.pdf", "plain.pdf"}
    problems = {p["file"]: p for p in data["problems"]}
    assert set(problems) == {"scanned.pdf", "half.pdf"}
    assert all(p["code"] == "NO_TEXT_LAYER" and "ocr" in p["hint"].lower() for p in problems.values())
    assert "3 of its 4 pages" in problems["half.pdf"]["message"]

    table = runner.invoke(app, ["ls", "-L", str(lib)], env={"COLUMNS": "200"})
    assert table.exit_code == 0
    assert "NO_TEXT_LAYER scanned.pdf" in " ".join(table.stdout.split())
    assert "NO_TEXT_LAYER half.pdf" in " ".join(table.stdout.split())


def test_ls_keeps_the_failure_until_the_file_is_fixed(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    pdfgen.make_image_only_pdf(lib / "scanned.pdf")
    pdfgen.make_plain_pdf(lib / "plain.pdf")
    runner.invoke(app, ["scan", str(lib), "--no-embed", "--json"])
    runner.invoke(app, ["scan", str(lib), "--no-embed", "--json"])  # unchanged: not read again, still reported
    data = json.loads(runner.invoke(app, ["ls", "-L", str(lib), "--json"]).stdout)
    assert [p["file"] for p in data["problems"]] == ["scanned.pdf"]
    (lib / "scanned.pdf").unlink()
    pdfgen.make_plain_pdf(lib / "scanned.pdf", title="Now With Text")
    runner.invoke(app, ["scan", str(lib), "--no-embed", "--json"])
    data = json.loads(runner.invoke(app, ["ls", "-L", str(lib), "--json"]).stdout)
    assert "problems" not in data
    assert {s["file"] for s in data["sources"]} == {"plain.pdf", "scanned.pdf"}
