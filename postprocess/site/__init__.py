'''What people read: the text tables of the command (``text``), the HTML report with the
papers' tables (``report``, ``tables.yaml``) and the trend pages (``trends``). Imports
``store`` and ``analysis``; nothing below imports it.'''
