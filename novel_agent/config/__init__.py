"""Configuration: settings (layered load/validate/merge), presets, budgets. Imports text/ and the
root modules.
"""
