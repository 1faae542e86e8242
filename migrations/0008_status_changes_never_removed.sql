-- A feedback item's status changes are its history: like its follow-ups and the
-- versions of its comments, they are never removed (editing them was refused already).
CREATE TRIGGER status_changes_are_history_no_delete
BEFORE DELETE ON status_changes
BEGIN
    SELECT RAISE(ABORT, 'status changes are history: they are never removed');
END;
