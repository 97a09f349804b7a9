"""A real Placement on 127.0.0.1: SQLite behind one thread, or PostgreSQL
behind gunicorn workers, started and stopped by pid.

The floor both halves are tested and demonstrated on. It imports neither
half (only ``image_type_common`` for the client it hands out).
"""
