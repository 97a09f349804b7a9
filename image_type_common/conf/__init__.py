"""Option helpers and the ``[placement]`` options both halves register."""
