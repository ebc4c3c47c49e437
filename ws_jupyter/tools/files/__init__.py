"""The file tools: read, write, edit (text and notebook cells), list, delete, stat, mkdir — one
module per tool, plus ``notebook_files`` (how the file tools read and write ``.ipynb``)."""
