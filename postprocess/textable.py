'''The one table renderer of the mdxbench command's text output (summary, regress,
acceptance, fidelity): a `rich` table printed to plain text, wide enough never to wrap.'''
import io


def render(header, rows):
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for h in header:
        table.add_column(str(h), overflow='fold')
    for row in rows:
        table.add_row(*(str(c) for c in row))
    con = Console(file=io.StringIO(), width=1000, color_system=None, force_terminal=False,
                  highlight=False)
    con.print(table)
    return '\n'.join(line.rstrip() for line in con.file.getvalue().splitlines() if line.strip())
