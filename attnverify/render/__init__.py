"""Rendering: the terminal, Markdown, LaTeX, HTML and plots. Evidence, results and verdicts are data; they are
drawn here."""
