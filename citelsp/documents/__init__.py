"""Documents: manuscripts and bibliographies parsed into citations and references."""
