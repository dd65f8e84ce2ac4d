"""Operations on a dataset folder: validate, clean, export, inventory, the dataset card."""
