'''The Atom feed of a system's incidents (``feed.xml`` of the published site): one entry per
incident, updated when its state changes, so feed readers and chat tools that subscribe see
new, reopened and resolved regressions. Written with ``feedgen``.'''
import datetime as dt


def _time(iso):
    t = dt.datetime.fromisoformat(iso)
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)


def title(inc):
    s = inc['series'][0]
    more = f" and {len(inc['series']) - 1} more series" if len(inc['series']) > 1 else ''
    where = f"{inc['system']}:{inc['partition']}" if inc['partition'] else inc['system']
    return (f"[{inc['state']}] {where}: {s['check']} {s['perf_var']} {s['effect']:+.0%}{more} "
            f"-- {inc['cause']}")


def summary(inc):
    lines = [f"Incident {inc['id']} ({inc['state']}), first run after the change "
             f"{inc['start'][:16]}: {inc['cause']}."]
    lines += [f"{s['partition']} {s['environ']} {s['check']} {s['perf_var']}: {s['effect']:+.1%} "
              f"({s['before']:.4g} -> {s['after']:.4g} {s['unit']})"
              + (' (went away)' if s['went_away'] else '') for s in inc['series']]
    if inc.get('split'):
        sp = inc['split']
        lines.append(f"Split {sp['time'][:16]} (previous build beside the new one): "
                     f"{sp['verdict']}" + (f" (series: {sp['tally']})" if sp.get('tally')
                                           else '') + '.')
        lines += [f"  {r['check']} {r['perf_var']}: {r['verdict']} -- {r['reason']}"
                  for r in sp['series']]
    if inc.get('ack'):
        lines.append(f"Acknowledged {inc['ack']['time'][:16]}: {inc['ack']['note']}")
    return '\n'.join(lines)


def write(incidents, path, system, base_url='./'):
    '''Write the Atom feed of ``incidents`` ({id: incident}) to ``path``; entries link to
    ``<base_url>incident-<id>.html``.'''
    from feedgen.feed import FeedGenerator

    fg = FeedGenerator()
    fg.id(f'urn:mdxbench:{system}:incidents')
    fg.title(f'mdxbench regressions on {system}')
    fg.author({'name': 'mdxbench'})
    fg.link(href=f'{base_url}feed.xml', rel='self')
    fg.link(href=f'{base_url}index.html', rel='alternate')
    fg.language('en')
    newest = None
    for inc in sorted(incidents.values(), key=lambda i: i['first_seen']):
        changed = _time(inc['history'][-1]['time'] if inc['history'] else inc['first_seen'])
        newest = max(newest or changed, changed)
        e = fg.add_entry(order='append')
        e.id(f"urn:mdxbench:{system}:incident:{inc['id']}")
        e.title(title(inc))
        e.published(_time(inc['first_seen']))
        e.updated(changed)
        e.link(href=f"{base_url}incident-{inc['id']}.html")
        e.summary(summary(inc))
    fg.updated(newest or dt.datetime.now(dt.timezone.utc))
    fg.atom_file(str(path), pretty=True)
    return path
