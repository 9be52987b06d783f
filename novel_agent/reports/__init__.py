"""What a project holds and costs: status, stats, usage, costs, plots, the doctor. Imports books/
and below.
"""
